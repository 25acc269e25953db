# lib/engine/certify.mk -- kernel certification (q42run --certify): the
# shared machinery and the CPU cases, built with or without Vulkan.
lib_libq42core_la_SOURCES += lib/engine/q42_certify.c lib/engine/q42_certify_impl.h
q42engine_HEADERS += lib/engine/q42_certify.h
